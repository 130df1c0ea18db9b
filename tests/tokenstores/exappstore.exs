# The application's store answered by the Elixir binding, for the store's
# contract (appstore_test.go, TestAppStoreContractThroughBindings): the
# library's store_load / store_save requests go to LemonMCP.Store.answer/3
# (as the client and the host call it) over `store: {load, save}`, the
# compare-and-save of docs/migrating.md over an Agent.
#
#     elixir -pa EBIN exappstore.exs
#
# EBIN is the binding's compiled application, with the NIF in its priv/
# (make elixir-nif). Reads one request a line, {"kind", "payload"}, and
# writes the binding's answer a line, {"status", "answer"}, until its input
# ends.

defmodule ExAppStore do
  alias LemonMCP.NIF

  def main do
    {:ok, docs} = Agent.start_link(fn -> %{} end)

    load = fn collection, key ->
      {:ok, Agent.get(docs, &Map.get(&1, {collection, key}))}
    end

    save = fn collection, key, expected, document ->
      Agent.get_and_update(docs, fn all ->
        case Map.get(all, {collection, key}) do
          {_doc, ^expected} ->
            {{:ok, expected + 1}, Map.put(all, {collection, key}, {document, expected + 1})}

          nil when expected == 0 ->
            {{:ok, 1}, Map.put(all, {collection, key}, {document, 1})}

          nil ->
            {{:conflict, nil, 0}, all}

          {doc, version} ->
            {{:conflict, doc, version}, all}
        end
      end)
    end

    loop({load, save})
  end

  defp loop(store) do
    case IO.read(:stdio, :line) do
      :eof ->
        :ok

      line ->
        {:ok, %{"kind" => kind, "payload" => payload}} =
          NIF.decode_json(String.trim_trailing(line))

        {status, answer} = LemonMCP.Store.answer(kind(kind), payload, store)
        {:ok, json} = NIF.encode_json(%{"status" => status, "answer" => answer})
        IO.puts(json)
        loop(store)
    end
  end

  defp kind("store_load"), do: :store_load
  defp kind("store_save"), do: :store_save
end

ExAppStore.main()
