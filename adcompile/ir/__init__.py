"""The intermediate representation: typed statements with structured control flow."""
