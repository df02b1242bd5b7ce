"""Modules as containers of arrays: Module, Parameter, their state, initialisation."""
