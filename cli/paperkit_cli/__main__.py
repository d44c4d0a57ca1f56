from paperkit_cli.main import main

main()
