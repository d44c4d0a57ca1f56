# The shell: the command list, the paper table, a command's help.
paperkit --help
paperkit papers
paperkit papers --available --format jsonl
