# One process of the shared-grant test: a client of the Elixir binding
# (LemonMCP.Client.HTTP, the NIF) that calls the echo tool from several
# Elixir processes until a deadline and prints {"ok", "failed", "errors"}
# as one JSON line.
#
#     elixir -pa EBIN exworker.exs CONFIG PROCESSES
#
# EBIN is the binding's compiled application, with the NIF in its priv/
# (make elixir-nif: bindings/elixir_nif/_build/test/lib/lemon_mcp/ebin).
# CONFIG is the client configuration file the other workers read; its auth
# object is the binding's `oauth:` option as it is (token_store, dpop, ...).
#
# A BEAM boots slower than the other workers, so the common start instant
# is not a command-line argument: once the NIF is loaded this prints
# "ready", then reads "START_AT_MS UNTIL_MS" (Unix ms) from stdin.

defmodule ExWorker do
  alias LemonMCP.Client.HTTP

  # Between two calls of one process: the suite runs on two loaded cores.
  @pause_ms 100

  def main([path, processes]) do
    {:ok, config} = LemonMCP.NIF.decode_json(File.read!(path))
    IO.puts("ready")
    [start_at, until] = IO.read(:stdio, :line) |> String.split() |> Enum.map(&String.to_integer/1)
    Process.sleep(max(0, start_at - System.os_time(:millisecond)))

    timeouts = config["timeouts"] || %{}

    opts = [
      url: config["transport"]["url"],
      oauth: config["auth"],
      timeout_ms: timeouts["call_ms"] || 30_000,
      ready_timeout_ms: timeouts["ready_ms"] || 30_000,
      timeout: (timeouts["ready_ms"] || 30_000) + 5_000
    ]

    case HTTP.start_link(opts) do
      {:ok, client} ->
        counts =
          1..String.to_integer(processes)
          |> Enum.map(fn i -> Task.async(fn -> run(client, i, until) end) end)
          |> Task.await_many(:infinity)
          |> Enum.reduce(%{"ok" => 0, "failed" => 0, "errors" => []}, fn {ok, failed, errors}, acc ->
            %{
              "ok" => acc["ok"] + ok,
              "failed" => acc["failed"] + failed,
              "errors" => Enum.take(acc["errors"] ++ errors, 5)
            }
          end)

        HTTP.close(client)
        report(counts)

      {:error, reason} ->
        report(%{"ok" => 0, "failed" => 1, "errors" => ["start: " <> inspect(reason)]})
        System.halt(1)
    end
  end

  defp run(client, i, until, n \\ 0, counts \\ {0, 0, []}) do
    if System.os_time(:millisecond) >= until do
      counts
    else
      {ok, failed, errors} = counts

      counts =
        case HTTP.call_tool(client, "echo", %{text: "e#{i}-#{n}"}) do
          {:ok, _} -> {ok + 1, failed, errors}
          {:error, reason} -> {ok, failed + 1, Enum.take(errors ++ [inspect(reason)], 5)}
        end

      Process.sleep(@pause_ms)
      run(client, i, until, n + 1, counts)
    end
  end

  defp report(counts) do
    {:ok, line} = LemonMCP.NIF.encode_json(counts)
    IO.puts(line)
  end
end

ExWorker.main(System.argv())
