from rooms_cli.cli.app import main

main()
