"""The site: pages rendered from templates, the static files (ES modules, CSS, icons), the error
pages and the HTTP guard in front of uvicorn.

May import every feature (a page shows them); only the transport imports the site.
"""
