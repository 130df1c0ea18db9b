package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words splits text into index terms: runs of letters and digits, broken
// again at camelCase humps (readFile: read, file; HTTPServer: http,
// server) and at letter/digit borders, lower-cased, stemmed, without stop
// words.
func Words(text string) []string {
	var out []string
	forEachWord(text, func(w string) {
		if t, ok := term(w); ok {
			out = append(out, t)
		}
	})
	return out
}

// forEachWord calls fn with each raw word of text, in order.
func forEachWord(text string, fn func(string)) {
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			fn(text[start:end])
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev = 0
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		split := false
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			split = true // readFile
		case unicode.IsLower(r) && unicode.IsUpper(prev):
			// HTTPServer: the hump is before the last capital.
			if i-start > utf8.RuneLen(prev) {
				back := i - utf8.RuneLen(prev)
				flush(back)
				start = back
			}
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			split = true // v2, s3bucket
		}
		if split {
			flush(i)
			start = i
		}
		prev = r
	}
	flush(len(text))
}

// term folds one raw word into an index term; false for a stop word.
func term(w string) (string, bool) {
	w = strings.ToLower(w)
	if stopWords[w] {
		return "", false
	}
	return stem(w), true
}

// stem strips the English endings that most often separate a query's
// words from a tool's (plural, -ing, -ed, a final e), so that "files",
// "file", "creating", "created" and "create" meet. It is deliberately
// light: a wrong merge costs more than a missed one.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = undouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops the doubled final consonant of a stripped word
// (running: run).
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// stopWords are function words that say nothing about what a tool does.
// Verbs such as get, list, set, create are kept: tool names are made of
// them.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "how": true, "i": true, "in": true, "into": true, "is": true, "it": true,
	"its": true, "me": true, "my": true, "of": true, "on": true, "or": true, "our": true, "please": true,
	"that": true, "the": true, "their": true, "them": true, "then": true, "there": true, "these": true,
	"this": true, "those": true, "to": true, "was": true, "we": true, "what": true, "when": true,
	"where": true, "which": true, "who": true, "will": true, "with": true, "you": true, "your": true,
	"can": true, "could": true, "would": true, "should": true, "do": true, "does": true, "some": true,
	"any": true, "all": true, "if": true, "not": true, "no": true, "so": true, "than": true, "use": true,
	"used": true, "using": true, "want": true, "need": true, "tool": true, "tools": true,
}
