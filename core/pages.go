package core

import (
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// pageWalk accumulates the pages of a list call made with AllPages.
type pageWalk struct {
	key     string // the result's list member ("tools", ...)
	items   [][]byte
	cursors map[string]bool
	pages   int
}

var listKeys = map[string]string{
	"tools/list":               "tools",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
	"prompts/list":             "prompts",
	"tasks/list":               "tasks",
}

func newPageWalk(method string) (*pageWalk, *Error) {
	key, ok := listKeys[method]
	if !ok {
		return nil, Errorf(StatusInvalidArgument, "all_pages applies only to list methods, not %s", method)
	}
	return &pageWalk{key: key, cursors: map[string]bool{}}, nil
}

// onPage takes one page: it either asks for the next one or completes the
// call with every item. A repeated cursor ends the walk; more than MaxPages
// pages fail it.
func (c *Client) onPage(cl *call, result []byte) {
	pw := cl.pages
	cursor, hasCursor, err := pw.add(result)
	if err != nil {
		c.finish(cl, err, nil)
		return
	}
	if !hasCursor {
		c.finish(cl, nil, pw.result())
		return
	}
	if pw.cursors[cursor] {
		c.logf("warning", "%s returned a cursor it had returned before; stopping after %d pages", cl.method, pw.pages)
		c.finish(cl, nil, pw.result())
		return
	}
	if pw.pages >= c.opts.MaxPages {
		c.finish(cl, Errorf(StatusProtocol, "%s returned more than %d pages (limits.max_pages)", cl.method, c.opts.MaxPages), nil)
		return
	}
	pw.cursors[cursor] = true
	params, perr := withField(cl.params, "cursor", cursor)
	if perr != nil {
		c.finish(cl, Errorf(StatusInternal, "cannot add the cursor to params: %s", perr.Error()), nil)
		return
	}
	c.mu.Lock()
	if cl.finished {
		c.mu.Unlock()
		return
	}
	reqID := c.nextRequestLocked(cl)
	c.mu.Unlock()
	if serr := c.sendRequest(cl, reqID, params); serr != nil {
		c.finish(cl, serr, nil)
	}
}

// add reads one page's items and next cursor.
func (pw *pageWalk) add(result []byte) (cursor string, hasCursor bool, err *Error) {
	it := jsonx.BorrowIterator(result)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return "", false, Errorf(StatusProtocol, "a page of results is not a JSON object")
	}
	hasList := false
	for field, ok := jsonx.NextMember(it); ok; field, ok = jsonx.NextMember(it) {
		switch field {
		case pw.key:
			if it.WhatIsNext() != jsonx.KindArray {
				return "", false, Errorf(StatusProtocol, "the %q member of a page is not an array", pw.key)
			}
			hasList = true
			for it.ReadArray() {
				pw.items = append(pw.items, jsonx.Value(it))
			}
		case "nextCursor":
			if it.WhatIsNext() == jsonx.KindString {
				cursor, hasCursor = it.ReadString(), true
			} else {
				it.Skip()
			}
		default:
			it.Skip()
		}
	}
	if it.Error != nil && it.Error.Error() != "EOF" {
		return "", false, Errorf(StatusProtocol, "a page of results is malformed")
	}
	if !hasList {
		// Never an empty list: the server did not say what it has.
		return "", false, Errorf(StatusProtocol, "a page of results has no %q member", pw.key)
	}
	pw.pages++
	return cursor, hasCursor, nil
}

// result joins every item into one list result.
func (pw *pageWalk) result() []byte {
	n := 16 + len(pw.key)
	for _, item := range pw.items {
		n += len(item) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	buf = jsonx.AppendString(buf, pw.key)
	buf = append(buf, ":["...)
	for i, item := range pw.items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, item...)
	}
	return append(buf, "]}"...)
}
