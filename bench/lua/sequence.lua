-- POST a form whose one-time value (authorization code or refresh token) is
-- PREFIX-<thread>-<n>: each wrk thread walks its own pre-inserted rows, n = 1, 2, 3, ...
-- Environment: BODY_TEMPLATE (with {value}), PREFIX, AUTHORIZATION.
local counter = 1
local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("tid", #threads)
end

function init(args)
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
    wrk.headers["Authorization"] = os.getenv("AUTHORIZATION")
    template = os.getenv("BODY_TEMPLATE")
    prefix = os.getenv("PREFIX")
end

function request()
    local value = prefix .. "-" .. tid .. "-" .. counter
    counter = counter + 1
    return wrk.format(nil, nil, nil, (template:gsub("{value}", value)))
end
