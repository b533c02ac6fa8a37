-- Tables, sorting, varargs and the table library.
local t = {5, 3, 8, 1, 9, 2}
table.sort(t)
print(table.concat(t, ","))
table.sort(t, function(a, b) return a > b end)
print(table.concat(t, " "))
table.insert(t, 4)
table.insert(t, 1, 0)
print(table.remove(t), table.remove(t, 1), #t, table.concat(t, "-"))
print(table.unpack({1, 2, 3}))
local packed = table.pack(1, nil, 3)
print(packed.n, packed[1], packed[2], packed[3])
print(table.concat(table.move({1, 2, 3}, 1, 3, 2, {9}), ","))
local keys = {}
for k in pairs({a = 1, b = 2, c = 3}) do keys[#keys + 1] = k end
table.sort(keys)
print(table.concat(keys))
for i, v in ipairs({"x", "y", nil, "z"}) do print(i, v) end
local function count(...) return select("#", ...), select(2, ...) end
print(count(1, nil, 3))
local nested = {a = {b = {c = "deep"}}}
print(nested.a.b.c, #nested, next({}))
local mt = {__index = function(_, k) return k .. "!" end, __len = function() return 42 end,
            __tostring = function() return "T" end, __add = function(a, b) return 7 end,
            __eq = function() return true end, __lt = function() return true end,
            __concat = function() return "cat" end, __call = function(self, x) return x * 2 end}
local o = setmetatable({}, mt)
print(o.hey, #o, tostring(o), o + 1, o .. "x", o(21), getmetatable(o) == mt)
print(rawget(o, "hey"), rawlen({1, 2}), rawequal(o, o))
local weak = setmetatable({}, {__mode = "k"})
weak[{}] = 1
print(type(weak))
