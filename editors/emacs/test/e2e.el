;;; e2e.el --- rag-lsp.el in batch Emacs against a real server  -*- lexical-binding: t; -*-

;; emacs --batch -l editors/emacs/rag-lsp.el -l editors/emacs/test/e2e.el
;;
;; Environment: RAG_LSP_E2E_WORKSPACE (a copy of examples/ with the broken files
;; of examples-caught/), RAG_LSP_E2E_CMD (the server command, a JSON list) and
;; RAG_LSP_E2E_OUT (where the JSON dump goes).
;; Opens the broken suite and dataset, starts Eglot, waits for the Flymake
;; diagnostics and writes them out (tests/test_editors_emacs.py asserts on them).

;;; Code:

(require 'json)
(require 'flymake)

(defvar rag-lsp-e2e--messages nil "window/showMessage texts from the server.")

(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'window/showMessage)
                (push (plist-get params :message) rag-lsp-e2e--messages))))

(defun rag-lsp-e2e--diagnostics ()
  "The Flymake diagnostics of the current buffer, as alists."
  (save-restriction
    (widen)
    (mapcar (lambda (diagnostic)
              (let* ((beg (flymake-diagnostic-beg diagnostic))
                     (text (flymake-diagnostic-text diagnostic))
                     (data (and (fboundp 'flymake-diagnostic-data) (flymake-diagnostic-data diagnostic)))
                     (lsp (and (consp data) (plist-get data :eglot-lsp-diag)))
                     (code (or (and lsp (plist-get lsp :code))
                               (and (string-match "\\[\\(RAG[0-9]+\\)\\]" text) (match-string 1 text)))))
                `((code . ,code)
                  (line . ,(1- (line-number-at-pos beg)))
                  (column . ,(save-excursion (goto-char beg) (current-column)))
                  (type . ,(symbol-name (flymake-diagnostic-type diagnostic)))
                  (text . ,text))))
            (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))

(defun rag-lsp-e2e--wait-for-diagnostics (timeout quiet)
  "Wait until the buffer has diagnostics, unchanged for QUIET seconds, at most TIMEOUT."
  (let ((deadline (+ (float-time) timeout))
        (last nil)
        (since (float-time)))
    (while (and (< (float-time) deadline)
                (not (and last (>= (- (float-time) since) quiet))))
      (accept-process-output nil 0.1)
      (flymake-start)
      (let ((now (rag-lsp-e2e--diagnostics)))
        (unless (equal now last)
          (setq last now since (float-time)))))
    last))

(defun rag-lsp-e2e--open (file)
  "Visit FILE, start Eglot for it, and return (mode . diagnostics)."
  (find-file file)
  (unless (eglot-current-server)
    (apply #'eglot (eglot--guess-contact)))
  (list (cons 'mode (symbol-name major-mode))
        (cons 'managed (if (eglot-managed-p) t :json-false))
        (cons 'diagnostics (vconcat (rag-lsp-e2e--wait-for-diagnostics 60 1.0)))))

(let* ((workspace (file-name-as-directory (getenv "RAG_LSP_E2E_WORKSPACE")))
       (out (getenv "RAG_LSP_E2E_OUT"))
       (dump nil))
  (condition-case failure
      (progn
        (setq rag-lsp-server-command (append (json-read-from-string (getenv "RAG_LSP_E2E_CMD")) nil))
        (setq rag-lsp-settings '(:severity (:RAG203 "off") :runTimeout 30))
        (setq eglot-sync-connect 60)
        (push (cons 'emacs emacs-version) dump)
        (push (cons 'suite (rag-lsp-e2e--open (expand-file-name ".punica/evals/broken.suite.yaml" workspace))) dump)
        (push (cons 'dataset (rag-lsp-e2e--open (expand-file-name ".punica/evals/broken.jsonl" workspace))) dump)
        (let ((server (eglot-current-server)))
          (push (cons 'servers (length (hash-table-values eglot--servers-by-project))) dump)
          (push (cons 'root (project-root (eglot--project server))) dump)
          (push (cons 'initialization_options (eglot-initialization-options server)) dump)
          ;; What the server gets when it asks for section ragLsp.
          (push (cons 'configuration
                      (eglot-handle-request server 'workspace/configuration
                                            :items (vector (list :section "ragLsp"))))
                dump)
          (rag-lsp-trust-workspace)
          (push (cons 'trusted_options (eglot-initialization-options server)) dump)
          (condition-case run-error
              (rag-lsp-run-case)
            (user-error (push (cons 'run_case (error-message-string run-error)) dump)))
          (push (cons 'messages (vconcat (reverse rag-lsp-e2e--messages))) dump)
          (ignore-errors (eglot-shutdown server))))
    (error (push (cons 'error (error-message-string failure)) dump)))
  (with-temp-file out
    (insert (json-encode dump)))
  (let ((confirm-kill-processes nil)
        (kill-emacs-query-functions nil))
    (kill-emacs (if (assq 'error dump) 1 0))))

;;; e2e.el ends here
