defmodule LemonMCP.DocsTest do
  # Every public module and function of the application is documented: a
  # module has a @moduledoc (or says @moduledoc false: internal), and every
  # public function of a documented module has a @doc (or @doc false).
  use ExUnit.Case, async: true

  test "every public module and function has documentation" do
    {:ok, modules} = :application.get_key(:lemon_mcp, :modules)

    missing =
      for mod <- Enum.sort(modules),
          {:docs_v1, _, :elixir, _, moduledoc, _, docs} = Code.fetch_docs(mod),
          item <- undocumented(mod, moduledoc, docs),
          do: item

    assert missing == [], "undocumented: " <> Enum.join(missing, ", ")
  end

  defp undocumented(mod, :none, _docs), do: ["#{inspect(mod)} (no @moduledoc)"]
  defp undocumented(_mod, :hidden, _docs), do: []

  defp undocumented(mod, _moduledoc, docs) do
    for {{kind, name, arity}, _, _, :none, _} <- docs, kind in [:function, :macro] do
      "#{inspect(mod)}.#{name}/#{arity}"
    end
  end
end
