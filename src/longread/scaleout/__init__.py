"""Scale-out on Ray: sessions, book-sharded builds (``ray_books``); model replicas live in
``longread.scaleout.ray_backend``. Only ``ray_session`` imports ``ray``, and only when called."""
