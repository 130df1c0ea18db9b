package rpcpeek

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResponseIDs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []int64
	}{
		{"result", `{"jsonrpc":"2.0","id":5,"result":{}}`, []int64{5}},
		{"error", ` {"jsonrpc":"2.0","id":-3,"error":{"code":1,"message":"x"}}`, []int64{-3}},
		{"result before id", `{"result":{"big":[1,2,{"id":9}]},"id":7}`, []int64{7}},
		{"request", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, nil},
		{"method after result", `{"id":5,"method":"x","result":{}}`, nil},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress"}`, nil},
		{"string id", `{"id":"a","result":{}}`, nil},
		{"fractional id", `{"id":1.5,"result":{}}`, nil},
		{"batch", `[{"id":1,"result":{}},{"id":2,"method":"m"},{"id":3,"error":{}}]`, []int64{1, 3}},
		{"truncated head", `{"jsonrpc":"2.0","id":42,"result":{"text":"xxxxxxxx`, []int64{42}},
		{"truncated before result", `{"jsonrpc":"2.0","id":42,"res`, nil},
		{"garbage", `{{{`, nil},
		{"empty", ``, nil},
		{"not an object", `"id"`, nil},
		{"spaces after colons", `{"jsonrpc": "2.0", "id": 8, "result": {}}`, []int64{8}},
		{"pretty printed", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\" :\t9 ,\r\n  \"result\": {}\n}", []int64{9}},
		{"exponent id", `{"id":1.0e0,"result":{}}`, []int64{1}},
		{"escaped member names", `{"\u0069d":4,"r\u0065sult":{}}`, []int64{4}},
		{"empty member name", `{"":0,"id":6,"result":{}}`, []int64{6}},
		{"string id that looks numeric", `{"id":"1","result":{}}`, nil},
		{"spaced batch", `[ {"id": 1, "result": {}} , {"id": 2, "error": {}} ]`, []int64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			ResponseIDs([]byte(tt.in), func(id int64) { got = append(got, id) })
			require.Equal(t, tt.want, got)
		})
	}
}

func TestCancelledRequestID(t *testing.T) {
	tests := []struct {
		in string
		id int64
		ok bool
	}{
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"t"}}`, 12, true},
		{`{"params":{"reason":"t","requestId":3},"method":"notifications/cancelled"}`, 3, true},
		{`{"method":"notifications/cancelled","params":{"requestId":"abc"}}`, 0, false},
		{`{"method":"notifications/cancelled","params":{}}`, 0, false},
		{`{"method":"notifications/cancelled"}`, 0, false},
		{`[]`, 0, false},
		{`{"method": "notifications/cancelled", "params": {"reason": "t", "requestId": 12}}`, 12, true},
		{`{"method":"notifications/cancelled","params":{"requestId":1.2e1}}`, 12, true},
	}
	for _, tt := range tests {
		id, ok := CancelledRequestID([]byte(tt.in))
		require.Equal(t, tt.ok, ok, tt.in)
		require.Equal(t, tt.id, id, tt.in)
	}
}
