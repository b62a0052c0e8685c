;;; lens.el --- rag-lsp run commands in batch Emacs  -*- lexical-binding: t; -*-

;; emacs --batch -l editors/emacs/rag-lsp.el -l editors/emacs/test/lens.el
;;
;; Against a server with code lenses and run commands (editors/test/lens_server.py
;; until the real server has them): runs a case and a suite through
;; `rag-lsp-run-case' / `rag-lsp-run-suite' and writes what happened as JSON to
;; RAG_LSP_E2E_OUT.  Environment as for e2e.el.

;;; Code:

(require 'json)
(require 'flymake)

(defun rag-lsp-lens--wait (predicate timeout)
  "Process output until PREDICATE holds, at most TIMEOUT seconds."
  (let ((deadline (+ (float-time) timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.1)
      (flymake-start))
    (funcall predicate)))

(defun rag-lsp-lens--codes ()
  (mapcar (lambda (diagnostic)
            (let ((text (flymake-diagnostic-text diagnostic)))
              (list (and (string-match "\\[\\(RAG[0-9]+\\)\\]" text) (match-string 1 text))
                    (1- (line-number-at-pos (flymake-diagnostic-beg diagnostic))))))
          (flymake-diagnostics)))

(let* ((workspace (file-name-as-directory (getenv "RAG_LSP_E2E_WORKSPACE")))
       (out (getenv "RAG_LSP_E2E_OUT"))
       (dump nil))
  (condition-case failure
      (progn
        (setq rag-lsp-server-command (append (json-read-from-string (getenv "RAG_LSP_E2E_CMD")) nil))
        (setq eglot-sync-connect 60)
        (find-file (expand-file-name ".punica/evals/gateway.jsonl" workspace))
        (apply #'eglot (eglot--guess-contact))
        (goto-char (point-min))
        (forward-line 1)
        (rag-lsp-run-case)
        (rag-lsp-lens--wait (lambda () (assoc "RAG400" (rag-lsp-lens--codes))) 30)
        (push (cons 'case_diagnostics (rag-lsp-lens--codes)) dump)
        (find-file (expand-file-name ".punica/evals/gateway.suite.yaml" workspace))
        (goto-char (point-min))
        (re-search-forward "^[ \t]*-[ \t]+id[ \t]*:")
        (push (cons 'suite_line (1- (line-number-at-pos))) dump)
        (forward-line 5)
        (rag-lsp-run-suite)
        (rag-lsp-lens--wait (lambda () (assoc "RAG404" (rag-lsp-lens--codes))) 30)
        (push (cons 'suite_diagnostics (rag-lsp-lens--codes)) dump)
        (goto-char (point-min))
        (push (cons 'run_case_without_lens
                    (condition-case told (progn (rag-lsp-run-case) "ran")
                      (user-error (error-message-string told))))
              dump)
        ;; In a dataset, a suite run is of the suites that read it: no lens is looked for.
        (find-file (expand-file-name ".punica/evals/gateway.jsonl" workspace))
        (goto-char (point-max))
        (rag-lsp-run-suite)
        (rag-lsp-lens--wait (lambda () (assoc "RAG404" (rag-lsp-lens--codes))) 30)
        (push (cons 'dataset_suite_diagnostics (rag-lsp-lens--codes)) dump)
        (ignore-errors (eglot-shutdown (eglot-current-server))))
    (error (push (cons 'error (error-message-string failure)) dump)))
  (with-temp-file out
    (insert (json-encode dump)))
  (let ((confirm-kill-processes nil)
        (kill-emacs-query-functions nil))
    (kill-emacs (if (assq 'error dump) 1 0))))

;;; lens.el ends here
