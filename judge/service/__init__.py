"""The HTTP service (FastAPI) and the review page over the same library as the CLI.
`uvicorn judge.service:create_app --factory` serves it."""

from judge.service.app import create_app

__all__ = ["create_app"]
