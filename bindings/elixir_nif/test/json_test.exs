defmodule LemonMCP.JSONTest do
  # The shim's JSON <-> term converters (c_src/json_term.c, term_json.c):
  # the mapping documented in c_src/lmcp_nif.h.
  use ExUnit.Case, async: true

  alias LemonMCP.NIF

  defp dec!(json) do
    assert {:ok, term} = NIF.decode_json(json)
    term
  end

  defp enc!(term) do
    assert {:ok, json} = NIF.encode_json(term)
    json
  end

  test "values" do
    assert dec!(~s({"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":null})) ==
             %{"tools" => [%{"name" => "echo", "inputSchema" => %{"type" => "object"}}], "nextCursor" => nil}

    assert dec!("true") == true and dec!("false") == false and dec!("null") == nil
    assert dec!(" [ ] ") == [] and dec!("{}") == %{}
    assert dec!("[1,-2,3.5,1e2,-0.0,0]") == [1, -2, 3.5, 100.0, -0.0, 0]
    assert dec!(~s("a\\"b\\\\c\\/d\\b\\f\\n\\r\\t")) == "a\"b\\c/d\b\f\n\r\t"
    assert dec!(~s("\\u00e9\\u4e2d\\ud83d\\ude00")) == "é中😀"
    assert dec!(~s("héllo 中文 😀")) == "héllo 中文 😀"
  end

  test "lone surrogates become U+FFFD, as in the library" do
    assert dec!(~s("\\ud83dx")) == "\uFFFDx"
    assert dec!(~s("\\ude00")) == "\uFFFD"
    assert dec!(~s("\\ud83d\\u0041")) == "\uFFFDA"
  end

  test "a repeated key: the last value wins" do
    assert dec!(~s({"a":1,"b":2,"a":3})) == %{"a" => 3, "b" => 2}
    many = "{" <> Enum.map_join(0..99, ",", &~s("k#{rem(&1, 40)}":#{&1})) <> "}"
    assert map_size(dec!(many)) == 40
    assert dec!(many)["k0"] == 80
  end

  test "integers of any size; numbers past a double and huge literals are text" do
    assert dec!("9223372036854775807") == 9_223_372_036_854_775_807
    assert dec!("-9223372036854775808") == -9_223_372_036_854_775_808
    assert dec!("18446744073709551615") == 18_446_744_073_709_551_615
    assert dec!("-18446744073709551615") == -18_446_744_073_709_551_615
    assert dec!("-123456789012345678901234567890") == -123_456_789_012_345_678_901_234_567_890
    big = String.duplicate("7", 700)
    assert dec!(big) == String.to_integer(big)
    assert dec!("1e400") == "1e400"
    assert dec!("1e-400") == 0.0
    huge = String.duplicate("9", 1025)
    assert dec!(huge) == huge
  end

  test "deep nesting costs no C stack" do
    v = dec!(String.duplicate("[", 20_000) <> String.duplicate("]", 20_000))
    assert Enum.reduce(1..19_999, v, fn _, [x] -> x end) == []
  end

  test "invalid input is an error with an offset" do
    for bad <- [
          "",
          "nul",
          "01",
          "1.",
          "1e",
          "-",
          "+1",
          "\"abc",
          "\"a\x01\"",
          "\"\\x\"",
          "\"\\u12\"",
          "\"\xff\"",
          "[1,]",
          "[1 2]",
          "{\"a\" 1}",
          "{a:1}",
          "{\"a\":1,}",
          "1 2",
          "NaN",
          "\"\\ud800\\uzzzz\""
        ] do
      assert {:error, {msg, off}} = NIF.decode_json(bad), inspect(bad)
      assert is_binary(msg) and is_integer(off)
    end
  end

  test "a large document is decoded off the normal schedulers" do
    text = String.duplicate("z", 300_000)
    assert dec!(~s({"t":"#{text}"})) == %{"t" => text}
  end

  test "encoding: maps, lists, scalars, round trips" do
    term = %{
      "a" => [1, 2.5, "é", true, false, nil],
      "b" => %{"c" => -7},
      "big" => 123_456_789_012_345_678_901_234_567_890
    }

    assert dec!(enc!(term)) == term
    assert enc!(%{a: :atom_value}) == ~s({"a":"atom_value"})
    assert enc!(%{1 => "x"}) == ~s({"1":"x"})
    assert enc!(1.0) == "1.0"
    assert enc!(0.1) == "0.1"
    assert enc!(-1.0e300) == "-1e+300"
    assert enc!(-12_345_678_901_234_567_890_123) == "-12345678901234567890123"
    assert enc!(18_446_744_073_709_551_615) == "18446744073709551615"
    assert enc!("q\"\\\n\t\u0001") == ~s("q\\"\\\\\\n\\t\\u0001")
    assert enc!([]) == "[]" and enc!(%{}) == "{}"
    assert dec!(enc!(%{"deep" => Enum.reduce(1..400, [], fn _, acc -> [acc] end)})) |> is_map()
  end

  test "encoding refuses what JSON cannot hold" do
    for bad <- [
          {:a, :b},
          self(),
          make_ref(),
          fn -> :x end,
          [1 | 2],
          <<0xFF>>,
          %{<<0xFF>> => 1},
          %{{:t} => 1},
          URI.parse("http://x"),
          <<1::3>>
        ] do
      assert {:error, {:encode_failed, msg}} = NIF.encode_json(bad), inspect(bad)
      assert is_binary(msg)
    end

    assert {:error, {:encode_failed, msg}} = NIF.encode_json(Enum.reduce(1..600, 1, fn _, acc -> [acc] end))
    assert msg =~ "nested"
  end

  test "a large term is encoded off the normal schedulers" do
    term = %{"items" => for(i <- 1..20_000, do: %{"i" => i, "s" => "item #{i}"})}
    assert dec!(enc!(term)) == term
  end
end
