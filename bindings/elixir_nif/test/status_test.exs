defmodule LemonMCP.StatusTest do
  # One source of truth: include/lemonmcp.h defines the statuses and the
  # version; the binding's names and version must cover and match them.
  use ExUnit.Case, async: true

  alias LemonMCP.Error

  @header Path.expand("../../../include/lemonmcp.h", __DIR__)

  defp header_statuses do
    found =
      Regex.scan(~r/^#define LMCP_(E_[A-Z_]+) \((-\d+)\)$/m, File.read!(@header))
      |> Enum.map(fn [_, name, code] -> {name, String.to_integer(code)} end)

    # the header's spelling changed: fix the pattern, not the check
    assert length(found) >= 14, inspect(found)
    found
  end

  # The atom of LMCP_E_<NAME> is <name> in lower case, except where the
  # seed's reasons were already named (LemonMCP.Error's table).
  @seed_names %{"E_TRANSPORT" => :transport_error, "E_PROTOCOL" => :protocol_error}

  test "every status of the header has its atom, and no other" do
    statuses = header_statuses()

    for {name, code} <- statuses do
      expected = Map.get(@seed_names, name, name |> String.trim_leading("E_") |> String.downcase() |> String.to_atom())
      assert Error.status_name(code) == expected, name
      assert Error.code(expected) == code, name
    end

    assert Error.status_name(0) == :ok
    known = for code <- -100..100, Error.status_name(code) != :unknown_status, code != 0, do: code
    assert Enum.sort(known) == Enum.sort(Enum.map(statuses, &elem(&1, 1)))
  end

  test "the library's message is the one users see" do
    # The binding does not re-check what the library checks: the reason
    # carries the library's message, naming the configuration field.
    assert {:error, {:invalid_option, msg}} = LemonMCP.Client.start_link(command: "x", max_message_bytes: -5)
    assert msg =~ "config.limits.max_message_bytes"
  end

  test "the version is the header's" do
    [_, version] = Regex.run(~r/^#define LMCP_VERSION_STRING "([^"]+)"$/m, File.read!(@header))
    assert LemonMCP.NIF.version() == version
    assert to_string(Application.spec(:lemon_mcp, :vsn)) == version
  end
end
