# Minimal image; the shipping issue makes it multi-stage with a non-root user.
FROM python:3.11-slim
WORKDIR /srv/playground
COPY pyproject.toml README.md gunicorn.conf.py ./
COPY app ./app
COPY static ./static
RUN pip install --no-cache-dir .
ENV PLAYGROUND_BIND=0.0.0.0:8000
EXPOSE 8000
CMD ["python", "-m", "gunicorn", "-c", "gunicorn.conf.py"]
