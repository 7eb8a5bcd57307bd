// The types of a worker loop's I/O, bound to the io_context's own executor rather than the
// type-erased any_io_executor: every operation, completion and coroutine step of the gateway
// would otherwise copy and destroy an erased executor (a few per cent of the CPU a proxied
// request costs, measured with perf).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace sluice::server::gateway {

using Executor = boost::asio::io_context::executor_type;
using Socket = boost::asio::ip::tcp::socket::rebind_executor<Executor>::other;
using Acceptor = boost::asio::ip::tcp::acceptor::rebind_executor<Executor>::other;
using Timer = boost::asio::steady_timer::rebind_executor<Executor>::other;
using Resolver = boost::asio::ip::tcp::resolver::rebind_executor<Executor>::other;
template <class T>
using Awaitable = boost::asio::awaitable<T, Executor>;

// Completion token: results as a tuple (error_code first), never an exception.
inline constexpr auto kNoThrow = boost::asio::as_tuple(boost::asio::use_awaitable_t<Executor>{});

}  // namespace sluice::server::gateway
