"""tttbot's Discord side: a discord.py bot that plays tic-tac-toe in guild channels.

Rules live in :mod:`game`; this package parses interactions, calls the domain, saves and renders.
"""
