"""The command line: thin typer adapters over the parts. No file I/O and no domain rules here."""
