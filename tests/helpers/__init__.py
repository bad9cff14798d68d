"""What test modules share, in one place: a test module imports helpers from here (or from a reference
implementation beside it), never from another test module; ``tests/test_architecture.py`` checks it.

``core`` composes the engine's private steps, ``inputs`` builds run files and logs, ``cli`` runs the command
line, ``serving`` fits the served estimators, ``app`` drives the app's pages and ``browser`` the browser.
"""
