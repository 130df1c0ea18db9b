# The README stays true (tests/readme/).
#   make test-readme   extracts every example of README.md and runs it as the program it is (Python, the
#                      command line, C, C++, Elixir as a mix application depending on the binding by path)
#                      against @modelcontextprotocol/server-everything, the server the examples name; and
#                      holds the README's feature list (against lmcp_features) and layout table, and each
#                      doc.go's file map, against the tree; and runs docs/host.md's end-to-end pins example
#   make test-readme READMEARGS="-k tree"   only the tree checks (no server, a second)

READMEARGS ?=

.PHONY: test-readme
TEST_SUITES += test-readme

test-readme: lib fixtures python-dev python-setup elixir-setup everything-setup
	cd $(ROOT)/tests/readme && PYTHONPATH=$(PY_DIR):. \
	  $(PYTHON) -m pytest -q -p no:cacheprovider --durations=10 $(READMEARGS) test_tree.py test_docs_host.py test_snippets.py
