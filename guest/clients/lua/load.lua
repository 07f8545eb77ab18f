-- Load the C module arg[1] with package.loadlib() (dlopen) and call it.
local f, e = package.loadlib(arg[1], "luaopen_mod")
if not f then
	print("loadlib-failed " .. e)
	os.exit(0)
end
print("value " .. f().value())
