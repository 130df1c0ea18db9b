defmodule LemonMCP.SandboxTest do
  # Stdio servers in a sandbox through Elixir (docs/sandbox.md): the host
  # reports what confines a server, a confined server answers, its write
  # outside allowWrite fails while ours succeeds, and a daemon it leaves
  # behind, confined or not, is gone once the host closes.
  use ExUnit.Case, async: true

  alias LemonMCP.Host
  alias LemonMCP.Test.Fixture

  # A command line of its own, so the daemon can be found from outside
  # (inside the sandbox its pid is one of its own namespace).
  defp token, do: "300.#{:erlang.unique_integer([:positive])}"

  # A server that tries a write outside what it is granted, double-forks a
  # daemon that calls setsid, then becomes the fixture.
  defp server(token, outside) do
    %{
      "command" => "/bin/sh",
      "args" => [
        "-c",
        "echo escaped > '#{outside}/from-server' 2>/dev/null; " <>
          "( setsid sleep #{token} & ) </dev/null >/dev/null 2>&1; exec '#{Fixture.path()}'"
      ],
      "timeouts" => %{"close_grace_ms" => 300}
    }
  end

  defp find(cmdline) do
    Path.wildcard("/proc/[0-9]*/cmdline")
    |> Enum.find_value(fn path ->
      case File.read(path) do
        {:ok, ^cmdline} -> path |> Path.dirname() |> Path.basename()
        _ -> nil
      end
    end)
  end

  @tag :tmp_dir
  test "a sandboxed and a plain server", %{tmp_dir: dir} do
    File.chmod!(dir, 0o777)
    File.mkdir_p!(Path.join(dir, "plain"))
    boxed_token = token()
    plain_token = token()

    config = %{
      "mcpServers" => %{
        "boxed" => Map.put(server(boxed_token, dir), "sandboxEnabled", true),
        "plain" => server(plain_token, Path.join(dir, "plain"))
      }
    }

    {:ok, h} = Host.start_link(config)
    assert :ok = Host.await_ready(h, 15_000)
    {:ok, servers} = Host.servers(h)
    assert %{"namespaces" => true, "landlock" => abi, "network" => "none"} = servers["boxed"]["sandbox"]
    assert abi >= 6
    refute Map.has_key?(servers["plain"], "sandbox")
    assert {:ok, [%{"text" => "confined"}]} = Host.call_tool(h, "boxed__echo", %{text: "confined"})

    refute File.exists?(Path.join(dir, "from-server")), "the confined server wrote outside allowWrite"
    assert File.exists?(Path.join([dir, "plain", "from-server"])), "the control: an unconfined server writes"
    File.write!(Path.join(dir, "from-app"), "app")

    daemons =
      for t <- [boxed_token, plain_token] do
        cmdline = "sleep\0#{t}\0"
        assert Fixture.eventually(fn -> find(cmdline) != nil end, 30_000), "the daemon never started"
        find(cmdline)
      end

    assert :ok = Host.close(h)

    for pid <- daemons do
      assert Fixture.eventually(fn -> not Fixture.alive?(pid) end, 30_000), "the daemon #{pid} outlived the host"
    end
  end
end
