" JSON Lines datasets (Neovim before 0.8 has no jsonl filetype).
autocmd BufRead,BufNewFile *.jsonl setfiletype jsonl
