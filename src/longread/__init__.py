"""longread: does a language model really use what it read thousands of tokens ago?"""

from longread.documents.book import Book, Chapter

__version__ = "0.1.0"

__all__ = ["Book", "Chapter", "__version__"]
