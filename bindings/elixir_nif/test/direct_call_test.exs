defmodule LemonMCP.DirectCallTest do
  # Requests go from the calling process straight to the NIF: the reply
  # never passes through the client process, which keeps ownership only.
  use ExUnit.Case, async: true

  alias LemonMCP.Client
  alias LemonMCP.Test.Fixture

  test "a call's completion comes to the caller, not through the client process" do
    c = Fixture.start!()
    :sys.suspend(c)
    # With the client process suspended, a call through it would hang; the
    # direct path needs it only for the first lookup, made before.
    try do
      assert {:ok, [%{"text" => "warm"}]} = run_with_resumed(c, fn -> Client.call_tool(c, "echo", %{text: "warm"}) end)
      assert {:ok, [%{"text" => "direct"}]} = Client.call_tool(c, "echo", %{text: "direct"})
    after
      :sys.resume(c)
    end
  end

  test "errors keep their shapes on the direct path" do
    c = Fixture.start!()
    assert {:error, {:tool_error, [%{"text" => "boom"}]}} = Client.call_tool(c, "fail", %{message: "boom"})
    assert {:error, {:rpc_error, %{code: -32601}}} = Client.request(c, "no/such/method", %{})
    assert {:error, :timeout} = Client.call_tool(c, "slow", %{ms: 2_000}, timeout: 100)
    assert {:ok, [%{"text" => "after"}]} = Client.call_tool(c, "echo", %{text: "after"})
  end

  test "a stopped client is not called through a stale resource" do
    c = Fixture.start!()
    assert {:ok, _} = Client.call_tool(c, "echo", %{text: "x"})
    Client.stop(c)
    assert {:noproc, _} = catch_exit(Client.call_tool(c, "echo", %{text: "x"}))
    refute Map.has_key?(Process.get({Client, :direct}, %{}), c)
  end

  test "the caller's cache of clients stays bounded" do
    for _ <- 1..40 do
      c = Fixture.start!()
      assert {:ok, _} = Client.call_tool(c, "echo", %{text: "x"})
      Client.stop(c)
    end

    assert map_size(Process.get({Client, :direct}, %{})) <= 32
  end

  test "many processes call one client at once" do
    c = Fixture.start!()

    results =
      1..32
      |> Enum.map(fn i -> Task.async(fn -> Client.call_tool(c, "echo", %{text: "t#{i}"}) end) end)
      |> Enum.map(&Task.await(&1, 10_000))

    assert results == Enum.map(1..32, fn i -> {:ok, [%{"type" => "text", "text" => "t#{i}"}]} end)
  end

  # The first call looks the client up through its process: resume it for
  # that, then suspend it again.
  defp run_with_resumed(c, fun) do
    :sys.resume(c)
    result = fun.()
    :sys.suspend(c)
    result
  end
end
