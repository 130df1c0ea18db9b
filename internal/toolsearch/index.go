package toolsearch

import (
	"math"
	"sort"
)

// Tool is what the index reads of one tool.
type Tool struct {
	// Name is the name results are known by (the host's name for the
	// tool); it also breaks ties.
	Name string
	// OriginalName is the server's name for the tool; when set, its
	// words are the name field's (Name may carry a server prefix).
	OriginalName string
	Server       string
	Title        string
	Description  string
	Params       []Param
}

// Param is one parameter of a tool's input schema.
type Param struct {
	Name        string
	Description string
}

// field is one weighted part of a tool's document.
type field int

const (
	fieldName field = iota
	fieldTitle
	fieldDescription
	fieldParamName
	fieldParamDescription
	fieldServer
	numFields
)

// weights of the fields, and how much each field's length normalises its
// frequencies (BM25F's per-field b). Names and titles are short and
// chosen with care; descriptions are long and say much in passing.
var (
	weights = [numFields]float64{4, 3, 1, 1.5, 0.5, 2}
	bs      = [numFields]float64{0.3, 0.3, 0.75, 0.5, 0.75, 0}
)

// BM25 saturation: how fast repeated occurrences stop counting.
const k1 = 1.2

// posting is one term's occurrences in one tool.
type posting struct {
	doc int32
	tf  [numFields]uint16
}

// Index is an immutable BM25F index over a catalogue of tools.
type Index struct {
	names    []string
	lengths  [][numFields]uint16
	avg      [numFields]float64
	postings map[string][]posting
}

// Hit is one ranked tool: its position in the catalogue given to New and
// its score (higher is better, always above zero).
type Hit struct {
	Tool  int
	Score float64
}

// New indexes tools; a Hit's Tool is an index into this slice.
func New(tools []Tool) *Index {
	ix := &Index{
		names:    make([]string, len(tools)),
		lengths:  make([][numFields]uint16, len(tools)),
		postings: map[string][]posting{},
	}
	var total [numFields]float64
	for d, t := range tools {
		ix.names[d] = t.Name
		counts := map[string]*[numFields]uint16{}
		var order []string
		add := func(f field, text string) {
			for _, w := range Words(text) {
				c := counts[w]
				if c == nil {
					c = new([numFields]uint16)
					counts[w] = c
					order = append(order, w)
				}
				if c[f] < math.MaxUint16 {
					c[f]++
				}
				if ix.lengths[d][f] < math.MaxUint16 {
					ix.lengths[d][f]++
				}
			}
		}
		// The server's own name for the tool: the host's may carry the
		// server's name as a prefix, which the server field already holds.
		if t.OriginalName != "" {
			add(fieldName, t.OriginalName)
		} else {
			add(fieldName, t.Name)
		}
		add(fieldTitle, t.Title)
		add(fieldDescription, t.Description)
		for _, p := range t.Params {
			add(fieldParamName, p.Name)
			add(fieldParamDescription, p.Description)
		}
		add(fieldServer, t.Server)
		for _, w := range order {
			ix.postings[w] = append(ix.postings[w], posting{doc: int32(d), tf: *counts[w]})
		}
		for f := range total {
			total[f] += float64(ix.lengths[d][f])
		}
	}
	if n := float64(len(tools)); n > 0 {
		for f := range total {
			ix.avg[f] = total[f] / n
		}
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.names) }

// Search ranks the tools against query and returns at most limit hits,
// best first, equal scores by name; tools that share no term with the
// query are left out. A query without a searchable word (empty, only
// punctuation or stop words) has no hits.
func (ix *Index) Search(query string, limit int) []Hit {
	if limit <= 0 || len(ix.names) == 0 {
		return nil
	}
	terms := Words(query)
	sort.Strings(terms) // one summation order: the same query, the same scores
	scores := make([]float64, len(ix.names))
	var touched []int32
	n := float64(len(ix.names))
	for i, t := range terms {
		if i > 0 && terms[i-1] == t {
			continue
		}
		list := ix.postings[t]
		if len(list) == 0 {
			continue
		}
		df := float64(len(list))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range list {
			tf := 0.0
			for f := field(0); f < numFields; f++ {
				if p.tf[f] == 0 {
					continue
				}
				norm := 1.0
				if ix.avg[f] > 0 {
					norm = 1 - bs[f] + bs[f]*float64(ix.lengths[p.doc][f])/ix.avg[f]
				}
				tf += weights[f] * float64(p.tf[f]) / norm
			}
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * tf / (k1 + tf)
		}
	}
	hits := make([]Hit, 0, len(touched))
	for _, d := range touched {
		if scores[d] > 0 {
			hits = append(hits, Hit{Tool: int(d), Score: scores[d]})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if ix.names[a.Tool] != ix.names[b.Tool] {
			return ix.names[a.Tool] < ix.names[b.Tool]
		}
		return a.Tool < b.Tool
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}
