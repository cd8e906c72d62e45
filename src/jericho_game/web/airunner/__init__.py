"""The AI runner: claims AI jobs from the database (moves, reviews, analysis streams) and thinks in a
bounded pool of processes, with fair turns between clients.

Above the features whose jobs it runs (the game round, review); below the site and the transport.
"""
