from rooms_cli.cli.fast import main

main()
