// Package toolsearch ranks a catalogue of MCP tools against a free-text
// query, so that an application with hundreds of tools can hand a model the
// few a task needs instead of all of them.
//
// The ranking is BM25F: each tool is a document of weighted fields (its
// name split into words, title, description, parameter names and
// descriptions, and its server's name); a term's frequencies in the fields
// are combined with their weights and length normalisations before one BM25
// saturation, so a word in a tool's name counts for more than the same word
// deep in a parameter's description, and a long description does not drown
// a short one. Words are split at snake_case, camelCase, kebab-case and
// punctuation, folded to lower case, stripped of common English endings
// (files, file; searching, search) and of stop words.
//
// The index is immutable once built and safe for concurrent searches; a
// changed catalogue gets a new index. Results are deterministic: equal
// scores are ordered by tool name.
package toolsearch
