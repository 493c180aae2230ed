"""Files into documents and passages: a parser per format, passage splitting along the document's
structure, content hashing and the limits an untrusted file is read under."""
