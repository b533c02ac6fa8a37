-- Closures, recursion, coroutines, goto, integer/float maths, errors.
local function counter()
    local n = 0
    return function() n = n + 1; return n end
end
local c1, c2 = counter(), counter()
print(c1(), c1(), c2())
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print(fib(20))
local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end return "done" end)
print(gen(), gen(), gen(), gen())
local co = coroutine.create(function(a, b) local c = coroutine.yield(a + b); return c * 2 end)
print(coroutine.resume(co, 1, 2))
print(coroutine.resume(co, 10))
print(coroutine.status(co), coroutine.isyieldable(), select(2, coroutine.running()))
for i = 1, 3 do
    for j = 1, 3 do
        if j == 2 then goto continue end
        print(i, j)
        ::continue::
    end
end
print(math.max(3, 9, 1), math.min(3, 9, 1), math.floor(3.7), math.ceil(3.2), math.abs(-4), math.huge)
print(math.sqrt(16), math.fmod(7, 3), math.tointeger(3.0), math.ult(1, 2), math.maxinteger, math.mininteger)
print(string.format("%.4f %.4f %.4f", math.sin(1), math.cos(1), math.exp(1)), math.pi)
print(pcall(error, "boom"), type(select(2, pcall(error, {code = 1}))))
print(select(2, pcall(error, "lvl", 0)), select(2, xpcall(function() error("x") end, function(m) return "handled: " .. m end)))
print(select(2, pcall(function() local x = nil; return x.y end)))
do
    local order = {}
    do
        local a <close> = setmetatable({}, {__close = function() order[#order + 1] = "a" end})
        local b <close> = setmetatable({}, {__close = function() order[#order + 1] = "b" end})
    end
    print(table.concat(order))
end
local ok, msg = pcall(function() local t <const> = 1; error("const ok") end)
print(ok, msg)
print(os.time() > 0, type(os.clock()), _VERSION, type(_G), _G.print == print)
x_global = 5
print(x_global, _G.x_global, _ENV.x_global)
print(assert(1 == 1, "fine"), type(nil), type(print), type({}), type(2), type("s"), type(true))
