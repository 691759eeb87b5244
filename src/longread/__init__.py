"""longread: does a language model really use what it read thousands of tokens ago?"""

from longread.documents.book import Book, Chapter
from longread.documents.corpus import iter_books as read_books
from longread.documents.reader import read_book

__version__ = "0.1.0"

__all__ = ["Book", "Chapter", "__version__", "read_book", "read_books"]
