"""Chat Template Playground: see exactly what your model receives.

The package root imports nothing: the sandbox and source worker processes import the core
packages below it and must not load Flask. The WSGI application is built by
`app.web.factory.create_app`.
"""
