defmodule LemonMCP.InteropTest do
  # The interoperability corpus seen from Elixir (issue 10): servers that
  # write JSON in other styles connect, and bytes that are not UTF-8 reach
  # the host as U+FFFD in valid UTF-8 strings.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  @pyserver Path.expand("../../../tests/fixtures/pyserver/server.py", __DIR__)

  for style <- ~w(python crlf reverse escape numbers all) do
    test "the fixture writing JSON in style #{style}" do
      c = Fixture.start!(args: ["-style", unquote(style)])
      assert {:ok, [%{"text" => "grüße ✓ 𝄞"}]} = Client.call_tool(c, "echo", %{text: "grüße ✓ 𝄞"})
    end
  end

  for args <- [[], ["--crlf"]] do
    test "a Python json.dumps server #{inspect(args)}: calls, and invalid UTF-8 as U+FFFD" do
      {:ok, c} = Client.start_link(command: "python3", args: [@pyserver | unquote(args)])
      :ok = Client.await_ready(c, 10_000)
      assert {:ok, [%{"text" => "grüße ✓ 𝄞"}]} = Client.call_tool(c, "echo", %{text: "grüße ✓ 𝄞"})
      assert {:ok, [%{"text" => text}]} = Client.call_tool(c, "bad_utf8", %{})
      assert text == "bad \uFFFD end"
      assert String.valid?(text)
    end
  end
end
