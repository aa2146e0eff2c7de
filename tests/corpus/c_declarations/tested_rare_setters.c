/* A bit tested before it is set, a value compared before it is stored, a
 * helper named for the bit; code after an if (likely()) that leaves, with a
 * label a jump from before reaches and one it does not; one-line setters
 * called from an ioctl, a probe, a new object and an unlikely() branch. */
static inline void inner_set_flag(struct inner *n, unsigned flag)
{
	atomic_or(1 << flag, &n->flags);
}

static inline void inner_hold(struct inner *n)
{
	refcount_inc(&n->refs);
}

void busy(struct inner *n, struct outer *o)
{
	if (test_bit(ACTIVE, &n->state) || test_and_set_bit(ACTIVE, &n->state))
		return;
	if (inner_has_dirty_io(n))
		goto out;
	set_bit(INNER_has_dirty_io, &n->flags);
	if (READ_ONCE(o->in.id) != n->id)
		WRITE_ONCE(o->in.id, n->id);
	if (!n->armed)
		n->armed = true;
	if (n->mask & BUSY)
		return;
	n->mask |= BUSY;
out:
	n->count = n->count * 2;
}

bool check(struct inner *t, struct outer *o)
{
	if (o->fast)
		goto hot;
	if (likely(t->established)) {
		if (o->ack)
			send(t);
		goto notify;
	}
	if (unlikely(o->deny))
		WRITE_ONCE(t->deny, true);
	complete(t);
	inner_set_flag(t, SEEN);
hot:
	t->hits = 1;
notify:
	t->notified = 1;
	return true;
}

static int inner_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct inner *n = file->private_data;
	inner_set_flag(n, RO);
	return 0;
}

static int foo_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct inner *n = pci_get_drvdata(pdev);
	inner_set_flag(n, PROBED);
	inner_hold(n);
	return 0;
}

struct inner *inner_alloc(void)
{
	struct inner *n = kzalloc(sizeof(*n), GFP_KERNEL);
	inner_set_flag(n, NEW);
	return n;
}

void __inner_restart(struct inner *n)
{
	clear_bit(INNER_RESTART, &n->state);
	smp_mb();
}

static inline void inner_restart(struct inner *n)
{
	if (test_bit(INNER_RESTART, &n->state))
		__inner_restart(n);
}

static bool inner_check_ro(struct inner *n)
{
	if (inner_test_flag(n, RO_WARNED))
		return false;
	inner_set_flag(n, RO_WARNED);
	inner_restart(n);
	return true;
}
