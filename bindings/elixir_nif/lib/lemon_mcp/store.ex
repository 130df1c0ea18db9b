defmodule LemonMCP.Store do
  @moduledoc """
  The application's store (`{"type": "app"}`, docs/app-requests.md): the
  library asks `store_load` and `store_save`, and this helper answers them
  from one callback pair, `{load, save}`:

    * `load.(collection, key)` returns `{:ok, {document, version}}` (version
      >= 1) or `{:ok, nil}` when nothing is stored;
    * `save.(collection, key, expected_version, document)` stores
      `document` only if the stored version is still `expected_version` (0:
      nothing stored) and returns `{:ok, new_version}`, or
      `{:conflict, stored_document, stored_version}` when another save won.

  Either may return `{:error, reason}`: the library's request fails (the
  reason is never repeated: it may hold a secret). The document is opaque:
  keep it as it is.
  """

  alias LemonMCP.Error

  @doc "Whether `store` is a `{load, save}` pair of the right arities."
  def valid?({load, save}), do: is_function(load, 2) and is_function(save, 4)
  def valid?(_other), do: false

  @doc "The `{status, answer}` of a `store_load` or `store_save` request."
  def answer(:store_load, %{"collection" => c, "key" => k}, {load, _save}) do
    case call(fn -> load.(c, k) end) do
      {:ok, nil} -> {0, %{"version" => 0}}
      {:ok, {%{} = doc, v}} when is_integer(v) and v > 0 -> {0, %{"version" => v, "document" => doc}}
      {:ok, {_doc, 0}} -> {0, %{"version" => 0}}
      other -> failed("load", other)
    end
  end

  def answer(:store_save, %{"collection" => c, "key" => k, "expected_version" => e, "document" => doc}, {_load, save})
      when is_integer(e) do
    case call(fn -> save.(c, k, e, doc) end) do
      {:ok, v} when is_integer(v) and v > e ->
        {0, %{"version" => v}}

      {:conflict, nil, 0} ->
        {0, %{"conflict" => true, "version" => 0}}

      {:conflict, %{} = won, v} when is_integer(v) and v > 0 ->
        {0, %{"conflict" => true, "version" => v, "document" => won}}

      other ->
        failed("save", other)
    end
  end

  def answer(kind, _payload, _store), do: failed(to_string(kind), :malformed_request)

  defp call(fun) do
    fun.()
  rescue
    e -> {:error, e.__struct__}
  end

  defp failed(what, {:error, _reason}),
    do: {Error.code(:internal), %{"message" => "the application's store #{what} failed"}}

  defp failed(what, _other),
    do: {Error.code(:internal), %{"message" => "the application's store #{what} answered an unexpected shape"}}
end
