"""Drop-in compatibility layers for other libraries' function signatures."""
