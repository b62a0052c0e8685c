;;; rag-lsp.el --- Retrieval eval suites checked as you type, with Eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: languages, tools
;; URL: https://github.com/rag-lsp/rag-lsp
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Connects Eglot to the rag-lsp language server (`rag-lsp serve') for
;; retrieval (RAG) eval suites: suite YAML, dataset JSON Lines and metric
;; manifests.
;;
;; Two major modes carry the file kinds, so Eglot can tell them apart from
;; other YAML and JSON:
;;
;;   `rag-lsp-suite-mode'    *.suite.yaml / *.suite.yml and YAML under .punica/
;;                           (suites, manifests, the targets config); derived
;;                           from `yaml-ts-mode' or `yaml-mode' when available.
;;   `rag-lsp-dataset-mode'  *.jsonl; derived from `js-json-mode' or `js-mode'.
;;
;; Setup:
;;
;;   (require 'rag-lsp)
;;   (add-hook 'rag-lsp-suite-mode-hook #'eglot-ensure)
;;   (add-hook 'rag-lsp-dataset-mode-hook #'eglot-ensure)
;;
;; The server command is `rag-lsp-server-command' (default "rag-lsp serve"),
;; or "PYTHON -m rag_lsp serve" when `rag-lsp-python' is set.  Server settings
;; go in `rag-lsp-settings'.  A `command' or `http' target runs only in
;; workspaces listed in `rag-lsp-trusted-directories' (or trusted for the
;; session with `rag-lsp-trust-workspace'); workspace files cannot change that.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'project)
(require 'seq)
(require 'subr-x)

(defgroup rag-lsp nil
  "The rag-lsp language server for retrieval eval suites."
  :group 'tools
  :prefix "rag-lsp-")

(defcustom rag-lsp-server-command '("rag-lsp" "serve")
  "The command that starts the server, as program and arguments.
Used unless `rag-lsp-python' is set."
  :type '(repeat string))

(defcustom rag-lsp-python nil
  "A Python interpreter that has rag-lsp installed, or nil.
When set, the server is started as PYTHON -m rag_lsp serve."
  :type '(choice (const :tag "Use `rag-lsp-server-command'" nil) (file :tag "Python interpreter")))

(defcustom rag-lsp-settings nil
  "Server settings, a plist with the server's camelCase keys.
For example: (:severity (:RAG207 \"off\") :runTimeout 30
:suiteGlobs [\"evals/**/*.yaml\"]).  Keys: suiteGlobs, datasetGlobs,
manifestGlobs, severity, maxFileBytes, maxYamlBytes, maxLineBytes,
maxYamlDepth, maxYamlNodes, runTimeout, runConcurrency, baseline,
maxFindingsShown.
Lists are written as vectors.  `trusted' is not set here: see
`rag-lsp-trusted-directories'."
  :type 'plist)

(defcustom rag-lsp-trusted-directories nil
  "Workspace roots whose `command' and `http' targets may run.
A workspace is trusted when its root is one of these directories or
lies below one."
  :type '(repeat directory))

;; The server program and the trust decide what runs: never from a workspace's
;; .dir-locals.el.
(dolist (variable '(rag-lsp-server-command rag-lsp-python rag-lsp-trusted-directories rag-lsp-settings))
  (put variable 'risky-local-variable t))

(defconst rag-lsp-install-command "pip install rag-lsp"
  "How to install the language server.")

(defvar rag-lsp--session-trust nil
  "Workspace roots trusted for this session with `rag-lsp-trust-workspace'.")

;;;; Workspace root

(defun rag-lsp-root (&optional directory)
  "The workspace root of DIRECTORY, as the server sees it.
The nearest folder upwards holding .punica/, else the git root."
  (let ((directory (or directory default-directory)))
    (when-let ((root (or (locate-dominating-file
                          directory (lambda (dir) (file-directory-p (expand-file-name ".punica" dir))))
                         (locate-dominating-file directory ".git"))))
      (file-name-as-directory (expand-file-name root)))))

(defun rag-lsp--project-find (directory)
  "A project for `project-find-functions': the rag-lsp workspace of DIRECTORY."
  (when-let ((root (rag-lsp-root directory)))
    (cons 'rag-lsp root)))

(cl-defmethod project-root ((project (head rag-lsp)))
  (cdr project))

;;;; Major modes

(defun rag-lsp--first-mode (candidates fallback)
  "The first mode of CANDIDATES that is usable here, else FALLBACK."
  (or (seq-find (lambda (mode)
                  (and (fboundp mode)
                       (or (not (string-suffix-p "-ts-mode" (symbol-name mode)))
                           (and (fboundp 'treesit-ready-p)
                                (treesit-ready-p (intern (string-remove-suffix "-ts-mode" (symbol-name mode))) t)))))
                candidates)
      fallback))

(when (locate-library "yaml-mode")
  (autoload 'yaml-mode "yaml-mode" nil t))

(defun rag-lsp--managed-setup ()
  "Buffer setup shared by the rag-lsp modes."
  (add-hook 'project-find-functions #'rag-lsp--project-find nil t))

;; The parents are chosen when this file is loaded, from what this Emacs has.
(eval
 `(define-derived-mode rag-lsp-suite-mode
    ,(rag-lsp--first-mode '(yaml-ts-mode yaml-mode) 'prog-mode)
    "RAG-Suite"
    "Major mode for rag-lsp suite files, manifests and the targets config (YAML)."
    (unless (derived-mode-p 'yaml-mode 'yaml-ts-mode)
      (setq-local comment-start "# ")
      (setq-local comment-start-skip "#+\\s-*")
      (modify-syntax-entry ?# "<")
      (modify-syntax-entry ?\n ">"))
    (rag-lsp--managed-setup))
 t)

(eval
 `(define-derived-mode rag-lsp-dataset-mode
    ,(rag-lsp--first-mode '(js-json-mode json-mode js-mode) 'prog-mode)
    "RAG-Dataset"
    "Major mode for rag-lsp datasets (JSON Lines: one case per line)."
    (setq-local truncate-lines t)
    (rag-lsp--managed-setup))
 t)

(add-to-list 'auto-mode-alist '("\\.jsonl\\'" . rag-lsp-dataset-mode))
(add-to-list 'auto-mode-alist '("\\.suite\\.ya?ml\\'" . rag-lsp-suite-mode))
(add-to-list 'auto-mode-alist '("/\\.punica/.*\\.ya?ml\\'" . rag-lsp-suite-mode))

;;;; Server

(defclass rag-lsp-server (eglot-lsp-server) ()
  :documentation "The rag-lsp language server.")

(defun rag-lsp-command ()
  "The server command: from `rag-lsp-python', else `rag-lsp-server-command'."
  (if (and rag-lsp-python (not (string-empty-p rag-lsp-python)))
      (list (expand-file-name rag-lsp-python) "-m" "rag_lsp" "serve")
    rag-lsp-server-command))

(defun rag-lsp-check-command (&optional command)
  "Why COMMAND cannot start the server, or nil.
The message names the install command."
  (let* ((command (or command (rag-lsp-command)))
         (program (car command)))
    (cond
     ((not (executable-find program))
      (if (equal program "rag-lsp")
          (format "rag-lsp: `rag-lsp' was not found on `exec-path'.  Install it with `%s', or set `rag-lsp-python' to a Python that has it, or `rag-lsp-server-command'."
                  rag-lsp-install-command)
        (format "rag-lsp: `%s' was not found.  Fix `rag-lsp-python' / `rag-lsp-server-command', or install rag-lsp with `%s'."
                program rag-lsp-install-command)))
     ((and (equal (nth 1 command) "-m") (equal (nth 2 command) "rag_lsp")
           (not (eql 0 (ignore-errors (call-process program nil nil nil "-c" "import rag_lsp")))))
      (format "rag-lsp: `%s' cannot import rag_lsp.  Install it with `%s -m %s'."
              program program rag-lsp-install-command)))))

(defun rag-lsp--contact (&optional _interactive)
  "The Eglot contact for the rag-lsp server; an error when it cannot start."
  (let ((command (rag-lsp-command)))
    (when-let ((problem (rag-lsp-check-command command)))
      (user-error "%s" problem))
    (cons 'rag-lsp-server command)))

(defun rag-lsp-trusted-p (root)
  "Whether the workspace at ROOT may run `command' and `http' targets."
  (when root
    (let ((root (file-name-as-directory (file-truename root))))
      (or (member root rag-lsp--session-trust)
          (seq-some (lambda (trusted)
                      (string-prefix-p (file-name-as-directory (file-truename trusted)) root))
                    rag-lsp-trusted-directories)))))

(defun rag-lsp--server-root (server)
  (project-root (eglot--project server)))

(defun rag-lsp-server-settings (root)
  "The settings the server gets for the workspace at ROOT, a plist."
  (let ((settings (copy-sequence rag-lsp-settings)))
    (cl-remf settings :trusted)
    (append settings (list :trusted (if (rag-lsp-trusted-p root) t :json-false)))))

(cl-defmethod eglot-initialization-options ((server rag-lsp-server))
  (rag-lsp-server-settings (rag-lsp--server-root server)))

(cl-defmethod eglot-handle-request
  ((server rag-lsp-server) (_method (eql workspace/configuration)) &key items)
  "Answer section ragLsp from `rag-lsp-settings' and the trust.
Never from dir-locals: a workspace cannot trust itself."
  (let ((answers (cl-call-next-method)))
    (apply #'vector
           (cl-loop for item across items
                    for answer across answers
                    collect (if (equal (plist-get item :section) "ragLsp")
                                (rag-lsp-server-settings (rag-lsp--server-root server))
                              answer)))))

(defun rag-lsp--capable (capability)
  "Whether the current buffer's server has CAPABILITY (Eglot's API moved)."
  (if (fboundp 'eglot-server-capable)
      (eglot-server-capable capability)
    (eglot--server-capable capability)))

(defun rag-lsp--current-server ()
  (let ((server (eglot-current-server)))
    (unless (and server (object-of-class-p server 'rag-lsp-server))
      (user-error "rag-lsp: no rag-lsp server manages this buffer"))
    server))

(defun rag-lsp-send-settings (server)
  "Tell SERVER its settings changed; it asks for them again."
  (jsonrpc-notify server :workspace/didChangeConfiguration
                  (list :settings (list :ragLsp (rag-lsp-server-settings (rag-lsp--server-root server))))))

(defun rag-lsp-trust-workspace ()
  "Let the current workspace run `command' and `http' targets, for this session."
  (interactive)
  (let* ((server (rag-lsp--current-server))
         (root (file-name-as-directory (file-truename (rag-lsp--server-root server)))))
    (cl-pushnew root rag-lsp--session-trust :test #'equal)
    (rag-lsp-send-settings server)
    (message "rag-lsp: %s is trusted for this session" root)))

;;;; Running cases (the server's code lenses and commands)

(defun rag-lsp--execute-async (server command arguments what)
  "Ask SERVER to execute COMMAND with ARGUMENTS (a vector), WHAT for messages."
  (jsonrpc-async-request server :workspace/executeCommand
                         (list :command command :arguments arguments)
                         :success-fn (lambda (_result) (message "rag-lsp: %s done" what))
                         :error-fn (lambda (error)
                                     (message "rag-lsp: %s failed: %s" what
                                              (plist-get error :message)))))

(defun rag-lsp--execute (command what)
  "Run the server's COMMAND for the code lens nearest point, WHAT for messages.
A case's lens is on its line; a suite's on its `- id:' line at or above point.
In a dataset, a suite run is of the suites that read it: no lens is looked for
\(a large dataset's lenses above point would each be resolved first)."
  (if (and (equal command "ragLsp.runSuite") (derived-mode-p 'rag-lsp-dataset-mode))
      (rag-lsp--execute-async (rag-lsp--current-server) command
                              (vector (list :uri (plist-get (eglot--TextDocumentIdentifier) :uri)))
                              what)
    (rag-lsp--execute-lens command what)))

(defun rag-lsp--execute-lens (command what)
  "Run COMMAND of the code lens nearest point (see `rag-lsp--execute')."
  (let* ((server (rag-lsp--current-server))
         (line (1- (line-number-at-pos)))
         (lenses (and (rag-lsp--capable :codeLensProvider)
                      (jsonrpc-request server :textDocument/codeLens
                                       (list :textDocument (eglot--TextDocumentIdentifier)))))
         (chosen nil))
    (unless (rag-lsp--capable :codeLensProvider)
      (user-error "rag-lsp: this server offers no code lenses, so no %s; upgrade rag-lsp" what))
    (cl-loop for lens across lenses
             for at = (plist-get (plist-get (plist-get lens :range) :start) :line)
             when (if (equal command "ragLsp.runCase") (= at line) (<= at line))
             do (let ((resolved (if (plist-get lens :command)
                                    lens
                                  (jsonrpc-request server :codeLens/resolve lens))))
                  (when (and (equal (plist-get (plist-get resolved :command) :command) command)
                             (or (null chosen)
                                 (> at (plist-get (plist-get (plist-get chosen :range) :start) :line))))
                    (setq chosen resolved))))
    (unless chosen
      (user-error "rag-lsp: no %s lens %s" what
                  (if (equal command "ragLsp.runCase") "on this line" "on or above this line")))
    (let ((lens-command (plist-get chosen :command)))
      (rag-lsp--execute-async server (plist-get lens-command :command)
                              (or (plist-get lens-command :arguments) []) what))))

(defun rag-lsp-run-case ()
  "Run the case on the current line (its \"Run case\" code lens)."
  (interactive)
  (rag-lsp--execute "ragLsp.runCase" "Run case"))

(defun rag-lsp-run-suite ()
  "Run the suite at or above point (its \"Run suite\" code lens)."
  (interactive)
  (rag-lsp--execute "ragLsp.runSuite" "Run suite"))

(add-to-list 'eglot-server-programs '((rag-lsp-suite-mode rag-lsp-dataset-mode) . rag-lsp--contact))

(provide 'rag-lsp)

;;; rag-lsp.el ends here
