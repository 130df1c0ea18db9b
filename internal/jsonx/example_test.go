package jsonx_test

import (
	"fmt"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Numbers decode as jsonx.Number, so an id or a size is never rounded
// through a float64.
func ExampleUnmarshal() {
	var v map[string]any
	if err := jsonx.Unmarshal([]byte(`{"id": 9007199254740993}`), &v); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%T %v\n", v["id"], v["id"])
	// Output: json.Number 9007199254740993
}

// A host's params must be one JSON object; line breaks are taken out so
// that the message can be framed by newlines (stdio).
func ExampleCompactObject() {
	out, err := jsonx.CompactObject([]byte("{\n  \"name\": \"echo\"\n}"))
	fmt.Printf("%s %v\n", out, err)
	_, err = jsonx.CompactObject([]byte(`["not", "an", "object"]`))
	fmt.Println(err)
	// Output:
	// {"name":"echo"} <nil>
	// not a JSON object
}
