"""Storage: the database (SQLite or PostgreSQL, through SQLAlchemy Core), the broker that tells
every server process "game X changed", and the threads that run blocking calls.

The bottom layer of the web app: it imports the rules library and the standard library, never a
feature of the web app.  The database is the truth; nothing above may decide from a copy in memory.
"""
