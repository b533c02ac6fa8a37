-- The sandbox's own string.find, string.rep and table.move at their edges:
-- every start position (negative, zero, past the end), empty needles and
-- haystacks, separators, counts of zero and below, and empty moves.
local s = "abcabcab"
for _, init in ipairs({-100, -9, -8, -1, 0, 1, 2, 8, 9, 10, 100}) do
  print("find", init, string.find(s, "ab", init, true), string.find(s, "ab", init),
        string.find(s, "", init, true), string.find("", "", init, true))
end
print("find plain specials", string.find("a.b(c)%d", ".b(", 1, true),
      string.find("x^y$", "^y$", 1, true))
print("find miss", string.find(s, "zz", 1, true), string.find(s, "abcabcabc", 1, true))
print("find method", s:find("ca", 1, true), ("hello"):find("l"))
for _, n in ipairs({-1, 0, 1, 2, 3}) do
  print("rep", n, string.rep("ab", n), string.rep("ab", n, "-"), string.rep("", n, ","),
        string.rep("", n), #string.rep("x", n, ""))
end
print("rep method", ("xy"):rep(3, "|"))
local t = {1, 2, 3, 4, 5}
print("move", table.concat(table.move(t, 2, 4, 1), ","))
print("move empty", table.concat(table.move({1, 2, 3}, 3, 1, 1), ","))
print("move into", table.concat(table.move({1, 2, 3}, 1, 3, 2, {9}), ","))
print("move same", table.concat(table.move({1, 2, 3}, 1, 0, 5), ","))
print("print", 1, nil, true, "a\tb", 2.5)
print()
print(nil)
