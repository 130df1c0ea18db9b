defmodule LemonMCP.HostPinsTest do
  # Pinned definitions through LemonMCP.Host (issue 27): the attacker cases
  # of tests/fixtures/rugpull/cases.json (the table every binding runs)
  # against the rugpull fixture, which changes what it offers on SIGUSR1.
  use ExUnit.Case, async: true

  alias LemonMCP.{Host, NIF}
  alias LemonMCP.Test.Fixture

  @cases_path Path.expand("../../../tests/fixtures/rugpull/cases.json", __DIR__)

  defp cases do
    {:ok, table} = NIF.decode_json(File.read!(@cases_path))
    table
  end

  defp rugpull, do: Path.join(Path.dirname(Fixture.path()), "rugpull")

  defp rig(tmp) do
    %{defs: Path.join(tmp, "defs.json"), pid: Path.join(tmp, "pid"), pins: Path.join(tmp, "pins.json")}
  end

  defp write_defs(rig, defs) do
    {:ok, json} = NIF.encode_json(defs)
    File.write!(rig.defs <> ".tmp", json)
    File.rename!(rig.defs <> ".tmp", rig.defs)
  end

  defp start(rig) do
    config = %{
      "pins" => %{"store" => rig.pins},
      "mcpServers" => %{
        "r" => %{
          "command" => rugpull(),
          "args" => ["-defs", rig.defs],
          "env" => %{"RUGPULL_PIDFILE" => rig.pid},
          "timeouts" => %{"ready_ms" => 5000, "close_grace_ms" => 300}
        }
      }
    }

    {:ok, h} = Host.start_link(config)
    assert :ok = Host.await_ready(h, 15_000)
    h
  end

  defp stop(h), do: if(Process.alive?(h), do: Host.stop(h))

  defp signal(rig) do
    {_, 0} = System.cmd("kill", ["-USR1", String.trim(File.read!(rig.pid))])
  end

  defp entry(pins, "instructions", _name), do: pins["instructions"]
  defp entry(pins, kind, name), do: pins[kind <> "s"][name]

  defp wait_status(h, kind, name, status, tries \\ 500) do
    {:ok, %{"r" => pins}} = Host.pins(h)
    e = entry(pins, kind, name)

    cond do
      e != nil and e["status"] == status -> e
      tries == 0 -> flunk("#{kind} #{name}: #{inspect(e)}, not #{status}")
      true -> Process.sleep(20) && wait_status(h, kind, name, status, tries - 1)
    end
  end

  test "every attacker case is held until the hash shown is approved" do
    tmp = Path.join(System.tmp_dir!(), "lmcp-pins-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(tmp) end)
    table = cases()

    for c <- table["cases"] do
      dir = Path.join(tmp, c["name"])
      File.mkdir_p!(dir)
      rig = rig(dir)
      write_defs(rig, table["base"])
      h = start(rig)
      {:ok, %{"r" => first}} = Host.pins(h)
      assert Enum.all?(Map.values(first["tools"]), &(&1["status"] == "approved")), c["name"]
      assert {:ok, [%{"text" => "called echo"}]} = Host.call_tool(h, "r__echo", %{})
      write_defs(rig, c["defs"])

      h =
        if c["name"] == "instructions" do
          stop(h)
          start(rig)
        else
          signal(rig)
          h
        end

      for e <- c["expect"] do
        got = wait_status(h, e["kind"], e["name"], e["status"])
        assert got["held"] == (e["status"] != "removed") or (got["held"] == nil and e["status"] == "removed")
      end

      {:ok, listed} = Host.list_tools(h)
      names = Enum.map(listed, & &1["name"])

      for t <- c["held_tools"] do
        refute ("r__" <> t) in names
        assert {:error, {:policy_denied, %{"message" => why}}} = Host.call_tool(h, "r__" <> t, %{})
        assert why =~ "is held"
      end

      for t <- c["callable_tools"] do
        assert {:ok, [%{"text" => "called " <> ^t}]} = Host.call_tool(h, "r__" <> t, %{})
      end

      {:ok, %{"r" => pins}} = Host.pins(h)

      for e <- c["expect"], e["status"] != "removed" do
        got = entry(pins, e["kind"], e["name"])
        stale = got["pinned_hash"] || "sha256:" <> String.duplicate("0", 64)
        assert {:error, {:invalid_state, msg}} = Host.approve(h, "r", e["name"], stale, e["kind"])
        assert msg =~ "no longer offers"
        assert :ok = Host.approve(h, "r", e["name"], got["hash"], e["kind"])
      end

      for t <- c["held_tools"] ++ c["callable_tools"] do
        assert {:ok, [%{"text" => "called " <> ^t}]} = Host.call_tool(h, "r__" <> t, %{})
      end

      stop(h)
    end
  end

  test "pins and approve without \"pins\" say so" do
    {:ok, h} = Host.start_link(%{"mcpServers" => %{"a" => %{"command" => Fixture.path(), "enabled" => false}}})
    assert {:error, {:invalid_state, msg}} = Host.pins(h)
    assert msg =~ ~s(no "pins")
    assert {:error, {:invalid_state, _}} = Host.approve(h, "a", "x", "sha256:0")
    Host.stop(h)
  end
end
