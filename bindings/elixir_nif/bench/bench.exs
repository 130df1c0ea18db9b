# Measurements for the NIF binding (make elixir-bench):
#   1. per-call overhead of LemonMCP.Client.call_tool/4 against the fixture,
#      sequential (JSON decoded in C by the shim), and through the raw NIF
#      (no client process) to show the GenServer's share;
#   2. end-to-end cost of larger results;
#   3. decoding alone: the shim's C decoder vs binary_to_term of the same
#      term's external format (why the library hands the NIF JSON, not
#      Erlang terms: decoding JSON in C is as fast, and needs no encoder in
#      the library).
# Compare (1) with the Go core:
#   cd tests && go test -run x -bench 'StdioCallTool/mcpfixture/lemonmcp' -benchmem ./bench/

alias LemonMCP.{Client, NIF}
fixture = System.get_env("LEMONMCP_FIXTURE") || Path.expand("../../../build/fixtures/mcpfixture", __DIR__)
n = String.to_integer(System.get_env("N", "3000"))

stats = fn us_list ->
  s = Enum.sort(us_list)
  len = length(s)
  %{mean: Float.round(Enum.sum(s) / len, 1), p50: Enum.at(s, div(len, 2)), p90: Enum.at(s, div(len * 9, 10))}
end

time_each = fn count, fun ->
  for _ <- 1..200, do: fun.()
  for _ <- 1..count, do: elem(:timer.tc(fun), 0)
end

start = fn ->
  {:ok, c} = Client.start_link(command: fixture)
  :ok = Client.await_ready(c, 10_000)
  c
end

IO.puts("== 1. call_tool/4 \"echo\" sequential, #{n} calls (us per call)")

c = start.()
ts = time_each.(n, fn -> {:ok, _} = Client.call_tool(c, "echo", %{text: "hello"}) end)
IO.puts("  LemonMCP.Client.call_tool: #{inspect(stats.(ts))}")
Client.stop(c)

(fn ->
   {:ok, r} = NIF.client_new(%{"transport" => %{"type" => "stdio", "command" => fixture}})
   tag = make_ref()
   :ok = NIF.set_handlers(r, tag)
   :ok = NIF.connect(r)

   receive do
     {:lmcp_event, ^tag, :ready, _} -> :ok
   end

   params = %{"name" => "echo", "arguments" => %{"text" => "hello"}}

   ts =
     time_each.(n, fn ->
       {:ok, id} = NIF.call(r, "tools/call", params, nil)

       receive do
         {:lmcp_done, ^id, 0, _} -> :ok
       end
     end)

   IO.puts("  raw NIF call + reply:      #{inspect(stats.(ts))}")
   NIF.free(r)
 end).()

IO.puts("\n== 2. larger results, end to end (us per call)")

for {label, fun} <- [
      {"list_tools (15 tools)", fn c -> {:ok, _} = Client.list_tools(c) end},
      {"list_resources (26)", fn c -> {:ok, _} = Client.list_resources(c) end},
      {"large 64 KiB", fn c -> {:ok, _} = Client.call_tool(c, "large", %{bytes: 65_536}) end},
      {"large 1 MiB", fn c -> {:ok, _} = Client.call_tool(c, "large", %{bytes: 1_048_576}) end}
    ] do
  c = start.()
  count = if label =~ "MiB", do: div(n, 10), else: div(n, 3)
  s = stats.(time_each.(count, fn -> fun.(c) end))
  Client.stop(c)
  IO.puts("  #{String.pad_trailing(label, 22)} p50 #{s.p50} mean #{s.mean}")
end

IO.puts("\n== 3. decoding only (us per document): C decoder vs binary_to_term(term_to_binary(doc), [:safe])")

tools =
  ~s({"tools":[) <>
    String.duplicate(
      ~s({"name":"echo","description":"Returns text, also as structuredContent","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"text to return"}},"required":["text"]}},),
      19
    ) <> ~s({"name":"last","inputSchema":{"type":"object"}}]})

docs = [
  {"echo (83 B)", ~s({"content":[{"type":"text","text":"hello"}],"structuredContent":{"text":"hello"}})},
  {"tools20 (#{byte_size(tools)} B)", tools},
  {"text64k", ~s({"content":[{"type":"text","text":") <> String.duplicate("x", 65_536) <> ~s("}]})}
]

for {label, json} <- docs do
  {:ok, term} = NIF.decode_json(json)
  etf = :erlang.term_to_binary(term)
  ^term = :erlang.binary_to_term(etf, [:safe])
  c = stats.(time_each.(2_000, fn -> NIF.decode_json(json) end))
  e = stats.(time_each.(2_000, fn -> :erlang.binary_to_term(etf, [:safe]) end))

  IO.puts(
    "  #{String.pad_trailing(label, 18)} C JSON: mean #{c.mean}  |  binary_to_term: mean #{e.mean} (#{byte_size(etf)} B of ETF)"
  )
end
