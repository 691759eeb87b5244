"""The MuLD QA baseline's document side: rank a document's chunks against the question, keep the top k.

Rule: the document is cut by :func:`~longread.benchmarks.muld.tasks.chunks.token_chunks`
into chunks of ``chunk_tokens`` tokens; every chunk gets a score against the
question; the ``top_k`` highest scores are kept (ties broken by the lower chunk
index) and returned in *document* order, each with its score. When no chunk
shares a term with the question every score is 0 and the first ``top_k`` chunks
are kept — the selection's notes say so.

Scorers (both fitted on this document's chunks only, so idf is within-document):

- ``tfidf``: scikit-learn ``TfidfVectorizer`` with its defaults (lowercase,
  ``token_pattern`` of 2+ word characters, smoothed idf, raw term counts, l2
  norm) plus scikit-learn's English stop-word list; the score is the cosine
  between the question's vector and the chunk's.
- ``bm25``: ``bm25s`` (Lucene variant, k1 = 1.5, b = 0.75) over tokens from
  ``bm25s.tokenize`` — lowercase, English stop words, Snowball English stemmer
  from ``PyStemmer``; query terms absent from the document are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from longread.benchmarks.muld.tasks.chunks import Selection, selection_from_chunks, token_chunks
from longread.text.tokenizers import NamedTokenizer

RetrievalMethod = Literal["tfidf", "bm25"]
METHODS: Final[tuple[str, ...]] = ("tfidf", "bm25")
BM25_K1: Final[float] = 1.5
BM25_B: Final[float] = 0.75

FloatArray = npt.NDArray[np.float64]


def retrieve(
    document: str,
    question: str,
    *,
    method: RetrievalMethod,
    chunk_tokens: int,
    top_k: int,
    tokenizer: NamedTokenizer,
) -> Selection:
    """The ``top_k`` chunks of ``document`` that best match ``question`` (rule in the module docstring)."""
    if method not in METHODS:
        raise ValueError(f"unknown retrieval method {method!r}; use one of {', '.join(METHODS)}")
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    if not question.strip():
        raise ValueError("the question is empty: nothing to rank the chunks against")
    chunks = token_chunks(document, tokenizer, chunk_tokens)
    if not chunks:
        raise ValueError("the document is empty: nothing to retrieve from")
    scores = score_chunks([chunk.text for chunk in chunks], question, method)
    chosen = top_indices(scores, top_k)
    notes: list[str] = []
    if not np.any(scores > 0):
        notes.append(f"no chunk shares a term with the question: kept the first {len(chosen)} chunks")
    return selection_from_chunks(
        method=method,
        tokenizer=tokenizer,
        document=document,
        chunks=chunks,
        chosen=chosen,
        scores=[float(scores[i]) for i in chosen],
        settings={"chunk_tokens": chunk_tokens, "top_k": top_k, **scorer_settings(method)},
        notes=notes,
    )


def score_chunks(texts: Sequence[str], question: str, method: RetrievalMethod) -> FloatArray:
    """One score per text against ``question`` (higher is better)."""
    if method == "tfidf":
        return _tfidf_scores(texts, question)
    return _bm25_scores(texts, question)


def top_indices(scores: FloatArray, top_k: int) -> list[int]:
    """Indices of the ``top_k`` highest scores, ties to the lower index, returned in ascending order."""
    ranked = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    return sorted(ranked[:top_k])


def scorer_settings(method: RetrievalMethod) -> dict[str, str | int | float | bool | None]:
    if method == "tfidf":
        return {"scorer": "sklearn TfidfVectorizer cosine", "stop_words": "english", "sublinear_tf": False}
    return {"scorer": "bm25s lucene", "k1": BM25_K1, "b": BM25_B, "stop_words": "en", "stemmer": "english"}


def _tfidf_scores(texts: Sequence[str], question: str) -> FloatArray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(lowercase=True, stop_words="english", sublinear_tf=False)
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # every chunk holds only stop words / no word of 2+ characters
        return np.zeros(len(texts), dtype=np.float64)
    query = vectorizer.transform([question])
    # Rows are l2-normalised, so the dot product is the cosine.
    return np.asarray((matrix @ query.T).toarray()[:, 0], dtype=np.float64)


def _bm25_scores(texts: Sequence[str], question: str) -> FloatArray:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    corpus = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    query = bm25s.tokenize([question], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
    if not any(corpus) or not query[0]:
        return np.zeros(len(texts), dtype=np.float64)
    index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
    index.index(corpus, show_progress=False)
    return np.asarray(index.get_scores(query[0]), dtype=np.float64)
