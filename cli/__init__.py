"""The perfpredict command line: thin Typer commands over the library."""
