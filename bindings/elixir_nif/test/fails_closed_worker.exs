# Run by sandbox_test.exs under tests/fixtures/withoutlayers (a machine
# without Landlock, or without user namespaces), in a VM of its own, as
# root or nobody: a host of three servers that each try a write outside
# allowWrite, then become the fixture: "boxed" (sandboxEnabled, so
# required), "loose" ("required": false) and "plain". Prints what
# happened as "key value" lines.
#
#   elixir -pa EBIN fails_closed_worker.exs FIXTURE

defmodule FailsClosedWorker do
  alias LemonMCP.Host

  defp settle(h, deadline) do
    {:ok, servers} = Host.servers(h)

    cond do
      servers["boxed"]["state"] == "failed" and servers["loose"]["state"] == "ready" -> servers
      System.monotonic_time(:millisecond) > deadline -> servers
      true -> Process.sleep(20) && settle(h, deadline)
    end
  end

  defp out(key, value), do: IO.puts("#{key} #{value}")

  def run([fixture]) do
    root = Path.join(System.tmp_dir!(), "fails-closed-#{System.unique_integer([:positive])}")
    outside = Path.join(root, "outside")
    File.mkdir_p!(outside)

    server = fn mark ->
      %{
        "command" => "/bin/sh",
        "args" => ["-c", "echo x > '#{outside}/#{mark}'; exec '#{fixture}'"],
        "restart" => false
      }
    end

    config = %{
      "mcpServers" => %{
        "boxed" =>
          Map.merge(server.("boxed"), %{
            "sandboxEnabled" => true,
            "sandbox" => %{"filesystem" => %{"allowWrite" => [Path.join(root, "in")]}}
          }),
        "loose" => Map.merge(server.("loose"), %{"sandboxEnabled" => true, "sandbox" => %{"required" => false}}),
        "plain" => server.("plain")
      }
    }

    {:ok, h} = Host.start_link(config)
    servers = settle(h, System.monotonic_time(:millisecond) + 60_000)
    out("boxed_state", servers["boxed"]["state"])
    out("boxed_error", servers["boxed"]["last_error"])
    out("boxed_sandbox", Map.has_key?(servers["boxed"], "sandbox"))
    out("loose_state", servers["loose"]["state"])
    out("loose_missing", Enum.join(get_in(servers, ["loose", "sandbox", "missing"]) || [], " | "))
    out("echo", match?({:ok, [%{"text" => "loose"}]}, Host.call_tool(h, "loose__echo", %{text: "loose"})))
    :ok = Host.close(h)
    out("written_boxed", File.exists?(Path.join(outside, "boxed")))
    File.rm_rf!(root)
  end
end

FailsClosedWorker.run(System.argv())
