/* Seeds: a new object's views, a system call's body beside a sys_*
 * function, a rare branch and an exchange loop's guard. */
struct request_sock *inet_reqsk_alloc(const struct sock *sk_listener)
{
	struct request_sock *req = reqsk_alloc_noprof(sk_listener);
	struct inet_request_sock *ireq = inet_rsk(req);
	struct sock *sk = (struct sock *)req;
	struct tcp_request_sock *treq = container_of(ireq, struct tcp_request_sock, req);

	ireq->ireq_family = sk_listener->sk_family;
	sk->sk_mark = 1;
	treq->ts_off = 0;
	atomic64_set(&ireq->ir_cookie, 0);
	return req;
}

SYSCALL_DEFINE1(brk, unsigned long, brk)
{
	struct mm_struct *mm = current->mm;

	if (unlikely(!mm))
		WRITE_ONCE(mm->brk, brk);
	else if (likely(brk))
		mm->start_brk = brk;
	else
		mm->def_flags = 0;
	return 0;
}

void sys_info(unsigned long flags)
{
	ftrace_dump(flags);
}

void tcp_wfree(struct sk_buff *skb)
{
	struct sock *sk = skb->sk;
	unsigned long oval, nval;

	oval = smp_load_acquire(&sk->sk_tsq_flags);
	do {
		if (!(oval & TSQF_THROTTLED) || (oval & TSQF_QUEUED))
			goto out;
		nval = (oval & ~TSQF_THROTTLED) | TSQF_QUEUED;
		nval |= (oval & ~(A | B)) | ((x + 1UL) << Y);
		nval &= ~TSQF_OLD;
	} while (!try_cmpxchg(&sk->sk_tsq_flags, &oval, nval));
out:
	local64_add(1, &sk->count);
}
