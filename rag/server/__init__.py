"""`rag serve`: the web page, the JSON API and the OpenAI-compatible endpoint, in one ASGI app over `rag.Papers`.

`app.py` builds the app (routes, errors, the token, the body limit); `openai_compat.py` holds the `/v1` routes;
`static/` is the page (plain HTML, CSS and JavaScript, no build step, nothing fetched from elsewhere).
"""
