"""Tools around the web app: the load test (``jericho loadtest``) and the rendering benchmark.

Top of the web app, beside the transport: they may import any part of it; nothing imports them.
"""
