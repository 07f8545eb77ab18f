-- A workload for Lua under IBT: every C function of the standard library
-- is reached through a pointer (lua_CFunction), as are comparators,
-- metamethods and coroutines.  Prints "work ok N" with a checksum.
local sum = 0
local t = {}
for i = 1, 2000 do t[i] = (i * 7919) % 1009 end
table.sort(t, function(a, b) return a > b end)
for i = 1, #t do sum = sum + t[i] * i end
local s = {}
for i = 1, 200 do s[#s + 1] = string.format("%05d", i) end
local joined = table.concat(s, ",")
sum = sum + #joined + select("#", string.byte(joined, 1, 20))
for w in string.gmatch(joined, "0*(%d+)") do sum = sum + tonumber(w) end
local mt = { __add = function(a, b) return a.v + b.v end,
	     __index = function(_, k) return #k end }
local a, b = setmetatable({ v = 3 }, mt), setmetatable({ v = 4 }, mt)
sum = sum + (a + b) + a.hello
local co = coroutine.wrap(function(n)
	for i = 1, n do coroutine.yield(i) end
end)
for _ = 1, 5 do sum = sum + co(5) end
local ok, err = pcall(error, "boom")
sum = sum + (ok and 0 or #err)
sum = sum + math.floor(math.sqrt(144)) + utf8.len("héllo")
print("work ok " .. sum)
