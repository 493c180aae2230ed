"""DEMO_MODE stand-ins: a shipped synthetic corpus, BM25 search over it, an ``httpx2.MockTransport`` that
speaks the E-utilities, SearXNG and You.com wire formats, and a ``ddgs.DDGS`` stand-in.

Entry points: ``transport.demo_transport()``, ``ddgs.DemoDDGS``, ``corpus.search()``, ``records.load_corpus()``.
"""
